"""One process's push notifications, assembled: configs, the outbox's triggers, the worker.

``PushNotifications`` is built once per process by agent/app.py, which hands ``configs`` to
the request handler, wraps the task writer with ``watch`` (a committed change wakes the
worker at once instead of at its next poll) and runs ``start``/``stop`` in the lifespan.
"""

from __future__ import annotations

import base64

from a2a.server.tasks import DatabasePushNotificationConfigStore, TaskStore
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.base.settings import Settings
from agent.push.configs import PushConfigs
from agent.push.delivery import PushDelivery, http_client
from agent.push.outbox import Outbox
from agent.push.signing import NotificationSigner
from agent.push.targets import PushTargets
from agent.security.auth import SigningKey
from agent.security.card_signatures import JWKS_PATH
from agent.storage.engine import exclusively
from agent.storage.settlement import Settlement, TaskWriter, WriterStats


class _WakingWriter(TaskWriter):
    """The task writer, waking the delivery worker after a commit that changed a task with a
    config made here: not after every commit, each of which would cost a look at the outbox
    on the request path's connection."""

    def __init__(self, inner: TaskWriter, delivery: PushDelivery, watched: set[str]) -> None:
        self._inner, self._delivery, self._watched = inner, delivery, watched

    async def start(self) -> None:
        await self._inner.start()

    async def stop(self) -> None:
        await self._inner.stop()

    async def commit(self, settlement: Settlement) -> None:
        await self._inner.commit(settlement)
        if settlement.task is not None and settlement.task.id in self._watched:
            self._delivery.wake()

    @property
    def stats(self) -> WriterStats:
        return self._inner.stats


def storage_key(key: SigningKey) -> bytes:
    """The Fernet key the configs are encrypted with in the database (their token and
    credentials are secrets), derived from the agent's signing key: replicas, which share that
    key, share this one, and nothing else needs keeping."""
    der = key.private_key.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    derived = HKDF(hashes.SHA256(), 32, salt=None, info=b"netagent push configs").derive(der)
    return base64.urlsafe_b64encode(derived)


class PushNotifications:
    """One process's push notifications: the configs, the outbox's triggers, the worker."""

    def __init__(
        self, settings: Settings, engine: AsyncEngine, tasks: TaskStore, key: SigningKey
    ) -> None:
        targets = PushTargets.parse(settings.push_allow)
        self._engine = engine
        self.outbox = Outbox(engine)
        store = DatabasePushNotificationConfigStore(
            engine, create_table=False, encryption_key=storage_key(key)
        )
        self.configs = PushConfigs(store, self.outbox, targets)
        public = settings.resolved_public_url
        signer = NotificationSigner(key, public, public + JWKS_PATH)
        self.delivery = PushDelivery(self.outbox, store, tasks, targets, signer, http_client())

    def watch(self, writer: TaskWriter) -> TaskWriter:
        """``writer``, waking the worker whenever it committed a task's change."""
        return _WakingWriter(writer, self.delivery, self.configs.watched)

    async def start(self) -> None:
        """After the storage is prepared: the outbox's triggers (once across replicas at a
        time), then the worker, which first delivers what a previous run left."""
        async with exclusively(self._engine, "netagent:push-triggers"):
            await self.outbox.initialize()
        self.delivery.start()

    async def stop(self) -> None:
        """The worker stops; the outbox keeps what it had not delivered."""
        await self.delivery.stop()
