"""One invocation in flight: the executor's event queue, its task, and who is listening.

The executor talks to the SDK's ``EventQueue`` interface; a ``TaskRun`` is that queue. Each
event is applied to the run's own ``Task`` at once (as the SDK's TaskManager would: a status
moves the previous status message into the history and merges its metadata; an artifact is
added, replaced or appended by id), and handed to the listeners (a streaming send, subscribers),
with no queue, consumer task or store round trip between. A settled state (terminal or
input-required) is held back: the request handler commits it, with the invocation's audit rows
and binding, in one durable write, and only then publishes it.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from a2a.server.events import Event, EventQueue
from a2a.types import (
    InvalidAgentResponseError,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

from agent.edge.prepared_answer import artifact_wire
from agent.edge.proto_json import plain_json
from agent.storage.audit import AuditRecord
from agent.storage.bindings import Binding, BindingStore
from agent.storage.settlement import Runner, Settlement, TaskWriter

SETTLED = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)
PARKED = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED})
TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
_CURRENT: ContextVar[TaskRun | None] = ContextVar("netagent_task_run", default=None)
Listener = asyncio.Queue[Event | None]
"""A listener's queue; None closes it."""


def copy_task(task: Task) -> Task:
    """A snapshot the run's later events cannot change."""
    copy = Task()
    copy.CopyFrom(task)
    return copy


def apply_status(task: Task, event: TaskStatusUpdateEvent) -> None:
    """The SDK TaskManager's rule: the old status message joins the history."""
    if task.status.HasField("message"):
        task.history.append(task.status.message)
    if event.metadata:
        task.metadata.MergeFrom(event.metadata)
    task.status.CopyFrom(event.status)


def apply_artifact(task: Task, event: TaskArtifactUpdateEvent) -> None:
    """The SDK TaskManager's rule: add, replace by id, or append parts (``append``).

    Its own helper is wrapped in a tracing span per call; this is the same rule without it.
    """
    artifact = event.artifact
    for existing in task.artifacts:
        if existing.artifact_id == artifact.artifact_id:
            if event.append:
                existing.parts.extend(artifact.parts)
                existing.metadata.update(dict(artifact.metadata.items()))
            else:
                existing.CopyFrom(artifact)
            return
    if event.append:
        raise InvalidAgentResponseError(
            message="append=True for an artifact the task does not have yet"
        )
    task.artifacts.append(artifact)


class TaskRun(EventQueue):
    """See the module docstring. ``runner``: commit the task's first state, naming this
    process as its runner, before anyone sees it (streaming, returnImmediately); None for a
    blocking send, whose id reaches no one before the run settles. ``may_park``: False for
    a new task not admitted under ``max_parked_tasks`` (agent/server/bounds.py), whose
    input-required or auth-required status is refused (the executor ends it FAILED)."""

    def __init__(
        self,
        owner: str,
        writer: TaskWriter,
        *,
        task: Task | None = None,
        runner: Runner | None = None,
        may_park: bool = True,
    ) -> None:
        self.owner = owner
        self.may_park = may_park
        self._task = task
        self.reply: Message | None = None
        self.final: TaskStatusUpdateEvent | None = None
        self.audit: list[AuditRecord] = []
        self.binding: Binding | None = None
        self.escaped = runner is not None and task is not None
        self._new = task is None  # its task is made here: stored only once it escapes or settles
        self.accepted = asyncio.Event()
        self.done = asyncio.Event()
        self.runner: asyncio.Task[None] | None = None
        self.executing = False
        self._writer = writer
        self._runner = runner
        self._listeners: list[Listener] = []
        self._artifact_ids: set[str] | None = None
        """The task's artifact ids, once ``add_artifact`` needs them."""
        self.wire_artifacts: dict[str, dict[str, Any]] = {}
        """Artifacts ``add_artifact`` built from plain JSON, as the answer prints them."""
        self._sparse: set[str] = set()
        """Artifacts added with no listener, as their id and name only: their one Data Part
        is in ``wire_artifacts``, and goes into the task's Struct when someone reads ``task``
        (a blocking JSON-RPC send, the answer and the stored row printed from
        ``wire_artifacts``, never does: a capacity check's 24 records, a tenth of its CPU)."""
        if task is not None:
            self.accepted.set()

    @property
    def task(self) -> Task | None:
        """The run's task, every artifact whole (built now if some were left sparse)."""
        if self._sparse:
            self._build()
        return self._task

    @task.setter
    def task(self, task: Task | None) -> None:
        self._task = task

    @property
    def task_id(self) -> str | None:
        """The task's id, None before it exists (reading it builds nothing)."""
        return None if self._task is None else self._task.id

    def sparse_task(self) -> Task | None:
        """The task as it is: artifacts in ``wire_artifacts`` may lack their parts. Only for
        a printer that takes those from ``wire_artifacts`` (``prepared_answer``); never for the
        wire or a reader."""
        return self._task

    def _build(self) -> None:
        """Each sparse artifact's Data Part, from its printed form (what the answer and the
        stored row say, so every reader of the task reads the same value)."""
        sparse, self._sparse = self._sparse, set()
        if self._task is None:
            return
        for artifact in self._task.artifacts:
            if artifact.artifact_id not in sparse or artifact.parts:
                continue
            (printed,) = self.wire_artifacts[artifact.artifact_id]["parts"]
            part = artifact.parts.add(media_type=printed.get("mediaType", ""))
            part.data.struct_value.SetInParent()  # an empty object is still an object
            part.data.struct_value.update(printed["data"])

    # -- the executor's side ---------------------------------------------------------------

    async def enqueue_event(self, event: Event) -> None:
        """Apply, then publish (a settled status waits for its commit)."""
        if isinstance(event, Message):
            self.reply = event
            return
        if isinstance(event, Task):
            await self._created(event)
            return
        if isinstance(event, TaskArtifactUpdateEvent) and self._sparse:
            self._build()  # (replaced or appended to: whole first)
        task = self._task
        if task is None:  # an executor that sends updates before its task: nothing to apply
            raise RuntimeError("task update before the task")
        if isinstance(event, TaskStatusUpdateEvent):
            if not self.may_park and event.status.state in PARKED:
                raise RuntimeError("a run not counted under max_parked_tasks tried to park")
            apply_status(task, event)
            if event.status.state in SETTLED:
                self.final = event
                return
        elif isinstance(event, TaskArtifactUpdateEvent):
            apply_artifact(task, event)
            self.wire_artifacts.pop(event.artifact.artifact_id, None)  # printed anew
            if self._artifact_ids is not None:
                self._artifact_ids.add(event.artifact.artifact_id)
        self._publish(event)

    def add_artifact(
        self,
        artifact_id: str,
        name: str,
        parts: list[Part] | None = None,
        *,
        data: dict[str, Any] | None = None,
        media_type: str = "",
        extensions: list[str] | None = None,
    ) -> bool:
        """A new artifact built in the task itself: ``parts`` copied once, or ``data`` as its
        one Data Part. What ``TaskUpdater.add_artifact`` sends and ``apply_artifact`` adds,
        without the two copies in between (an Artifact, then its event) and the final one (into
        the task): a capacity check's 24 records cost a third as much (bench.perf --profile).
        An event is built only for listeners. False, doing nothing, where the general rule
        applies instead: no task yet, an id the task already has (replace), or ``data`` only
        ParseDict can judge; the caller then goes the TaskUpdater way.
        """
        task = self._task
        if task is None or (data is not None and not plain_json(data, 1)):
            return False
        if self._artifact_ids is None:
            self._artifact_ids = {artifact.artifact_id for artifact in task.artifacts}
        if artifact_id in self._artifact_ids:
            return False
        self._artifact_ids.add(artifact_id)
        artifact = task.artifacts.add(artifact_id=artifact_id, name=name)
        if extensions:
            artifact.extensions.extend(extensions)
        if data is not None and not parts and not self._listeners:
            # no one reads it now: its Struct waits for a reader (``task``), if any comes
            self.wire_artifacts[artifact_id] = artifact_wire(
                artifact_id, name, data, media_type, extensions
            )
            self._sparse.add(artifact_id)
            return True
        if data is not None:
            part = artifact.parts.add(media_type=media_type)
            part.data.struct_value.SetInParent()  # an empty object is still an object
            part.data.struct_value.update(data)
            if not parts:  # the answer prints it from here (agent/edge/prepared_answer.py)
                self.wire_artifacts[artifact_id] = artifact_wire(
                    artifact_id, name, data, media_type, extensions
                )
        if parts:
            artifact.parts.extend(parts)
        if self._listeners:
            event = TaskArtifactUpdateEvent(
                task_id=task.id, context_id=task.context_id, artifact=artifact
            )
            self._publish(event)
        return True

    def working(self, metadata: dict[str, Any] | None = None) -> bool:
        """WORKING, applied as the TaskManager's rule applies ``TaskUpdater.update_status``'s
        event, without building the event (and its metadata Struct) no listener would read.
        False, doing nothing, when someone listens: they get the event the general way."""
        task = self._task
        if task is None or self._listeners:
            return False
        if task.status.HasField("message"):
            task.history.append(task.status.message)
        if metadata:
            task.metadata.update(metadata)  # a Struct's merge replaces each key's value
        task.status.Clear()
        task.status.state = TaskState.TASK_STATE_WORKING
        task.status.timestamp.FromDatetime(datetime.now(UTC))
        return True

    async def _created(self, task: Task) -> None:
        self.task = task
        if self._runner is not None:
            await self._writer.commit(Settlement(self.owner, copy_task(task), runner=self._runner))
            self.escaped = True
        self.accepted.set()
        self._publish(copy_task(task))

    async def flush_audit(self, records: list[AuditRecord]) -> None:
        """The audit log's flush hook: rows go out now only if something could leave before
        the settled state (a listener sees records as they come); else with that state."""
        if self.final is None and self._listeners:
            await self._writer.commit(Settlement(self.owner, audit=records))
            return
        self.audit.extend(records)

    async def defer_binding(self, binding: Binding) -> None:
        """A binding the executor stores: now, if the task is visible already; else with the
        settled state."""
        if self.escaped:
            await self._writer.commit(Settlement(self.owner, binding=binding))
            return
        self.binding = binding

    # -- the handler's side ----------------------------------------------------------------

    def listen(self) -> Listener:
        """A queue of this run's events from now on (the caller takes its snapshot first)."""
        listener: Listener = asyncio.Queue()
        self._listeners.append(listener)
        return listener

    def forget(self, listener: Listener) -> None:
        """A listener that went away (a closed stream)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def settlement(self, audit: list[AuditRecord]) -> Settlement | None:
        """The settled write: the task as it ends (sparse artifacts as they are: the row
        prints them), its audit rows, its binding; the task's first write if no state of it
        was written before (nothing escaped: a blocking send's new task)."""
        if self._task is None:
            return None
        return Settlement(
            self.owner,
            copy_task(self._task),
            audit=[*self.audit, *audit],
            binding=self.binding,
            printed=dict(self.wire_artifacts),  # (never changed: the answer only prints them)
            sparse=frozenset(self._sparse),
            first_write=self._new and not self.escaped,
        )

    def ended_elsewhere(self, task: Task) -> None:
        """The stored task ended while this run ran (its settled write was refused): that
        end, as stored, is what the run's callers and listeners get."""
        self._task = task
        self._sparse.clear()
        self.wire_artifacts.clear()
        self._artifact_ids = None
        self.reply = None
        self.final = TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=task.status
        )

    def finish(self) -> None:
        """After the settled write: publish the held state and close every listener."""
        if self.final is not None:
            self._publish(self.final)
        elif self.reply is not None:
            self._publish(self.reply)
        for listener in self._listeners:
            listener.put_nowait(None)
        self._listeners.clear()
        self.accepted.set()
        self.done.set()

    def _publish(self, event: Event) -> None:
        for listener in self._listeners:
            listener.put_nowait(event)


def current_run() -> TaskRun | None:
    """The run whose executor is running in this context."""
    return _CURRENT.get()


def enter_run(run: TaskRun) -> object:
    """Make ``run`` the current one (a token for ``leave_run``)."""
    return _CURRENT.set(run)


def leave_run(token: object) -> None:
    """Undo ``enter_run``."""
    _CURRENT.reset(token)  # type: ignore[arg-type]


class RunBindings(BindingStore):
    """Bindings the running invocation writes go with its settled state (or at once once its
    task is visible, so every replica reads the same binding); all others pass through."""

    def __init__(self, inner: BindingStore) -> None:
        self._inner = inner

    async def get(self, task_id: str, owner: str) -> Binding | None:
        """From the store (a run's own binding is written by the time anyone else asks)."""
        return await self._inner.get(task_id, owner)

    async def put(self, binding: Binding) -> None:
        """Deferred to the current run when it is this task's run."""
        run = current_run()
        if run is not None and run.task_id is not None and run.task_id == binding.task_id:
            await run.defer_binding(binding)
            return
        await self._inner.put(binding)
