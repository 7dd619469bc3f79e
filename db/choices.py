"""Choice sets for the inventory, NetBox style: one small class per field.

Values are stored as short strings guarded by CHECK constraints (not native
database enums), so the schema migrates the same way on SQLite and PostgreSQL.
"""

from __future__ import annotations

from enum import StrEnum


class SiteStatus(StrEnum):
    """NetBox ``SiteStatusChoices``."""

    PLANNED = "planned"
    STAGING = "staging"
    ACTIVE = "active"
    DECOMMISSIONING = "decommissioning"
    RETIRED = "retired"


class DeviceRole(StrEnum):
    """Position of a device in the topology."""

    CORE = "core"
    AGGREGATION = "aggregation"
    EDGE = "edge"
    ACCESS = "access"


class DeviceStatus(StrEnum):
    """Subset of NetBox ``DeviceStatusChoices`` that operations cares about."""

    ACTIVE = "active"
    PLANNED = "planned"
    OFFLINE = "offline"
    FAILED = "failed"
    DECOMMISSIONING = "decommissioning"


class InterfaceType(StrEnum):
    """NetBox ``InterfaceTypeChoices`` slugs for the speeds the simulator uses."""

    GE_1000BASE_T = "1000base-t"
    XE_10GBASE_X_SFPP = "10gbase-x-sfpp"
    XXV_25GBASE_X_SFP28 = "25gbase-x-sfp28"
    CE_100GBASE_X_QSFP28 = "100gbase-x-qsfp28"
    XE_400GBASE_X_QSFPDD = "400gbase-x-qsfpdd"
    LAG = "lag"
    VIRTUAL = "virtual"


class AdminStatus(StrEnum):
    """OpenConfig ``admin-status``."""

    UP = "UP"
    DOWN = "DOWN"


class OperStatus(StrEnum):
    """OpenConfig ``oper-status`` (the values the simulator produces)."""

    UP = "UP"
    DOWN = "DOWN"
    TESTING = "TESTING"
    LOWER_LAYER_DOWN = "LOWER_LAYER_DOWN"


class LinkKind(StrEnum):
    """What carries the link: a cable, a LAG bundle or a provider circuit."""

    PHYSICAL = "physical"
    LAG = "lag"
    CIRCUIT = "circuit"


class LinkStatus(StrEnum):
    """NetBox ``LinkStatusChoices`` plus ``down`` (operationally failed)."""

    CONNECTED = "connected"
    PLANNED = "planned"
    DOWN = "down"
    DECOMMISSIONING = "decommissioning"


class Direction(StrEnum):
    """Traffic direction of a link sample, relative to the A and B ends."""

    A_TO_B = "a_to_b"
    B_TO_A = "b_to_a"


class MetricName(StrEnum):
    """Device and interface metrics kept in ``metric_sample``."""

    UTILIZATION = "utilization"
    CPU = "cpu"
    MEMORY = "memory"
    ERRORS = "errors"


class MetricUnit(StrEnum):
    """Units of ``metric_sample.value`` (UCUM-ish spelling)."""

    PERCENT = "percent"
    COUNT = "count"


METRIC_UNITS: dict[MetricName, MetricUnit] = {
    MetricName.UTILIZATION: MetricUnit.PERCENT,
    MetricName.CPU: MetricUnit.PERCENT,
    MetricName.MEMORY: MetricUnit.PERCENT,
    MetricName.ERRORS: MetricUnit.COUNT,
}
"""The one unit each metric is recorded in, so readers never guess."""
