"""The request handler: one pass per invocation, behind the SDK's ``RequestHandler`` interface.

The SDK's JSON-RPC and HTTP+JSON adapters, types and errors stay; what sits behind them is ours.
A send runs edge checks, routing, then the executor (entitlement, interface match, validation,
authorization, constraints, the skill, record and output validation) with the executor's event
queue being the task itself (agent/server/task_run.py): no event queue, consumer task or store
round trip per event. A blocking send is answered once its settled state (terminal or
input-required) is durable, in one write with its audit rows and binding (agent/storage/
settlement.py: concurrent requests share commits). Where the task id reaches a client before
the task settles (streaming, returnImmediately) the accepted state is durable first. Get,
list, cancel and subscribe read the runs in flight here (``LiveTasks``) and then the store; a
cancel for a task another replica runs goes there by the cancel relay.

Also here, before any task exists: required extensions, identifiers the store can hold, the
task a follow-up names (owner-scoped), accepted output modes; and a guard that turns any
unexpected exception into a generic error with a correlation id (the SDK would send the
exception's text, SQL included). Errors raised here carry fixed text: never an input value.

Where the a2a-sdk 1.3 default handler is wrong, this one is not: a follow-up naming only its
task keeps the task's context; two concurrent follow-ups to one task (in one process) run one
after the other, and the second, finding the task ended, is refused (-32004) instead of
silently dropped; a streamed follow-up starts with the Task.

Push configs (agent/push/) are the caller's, of the caller's own task: one in SendMessage's
configuration is stored before the task's first write, under the id the task will have, so
its first change is announced too.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import re
from collections.abc import AsyncGenerator, Callable
from datetime import UTC, datetime
from typing import Any

from a2a.helpers import new_data_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import RequestHandler
from a2a.server.tasks import TaskStore
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    ContentTypeNotSupportedError,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    InternalError,
    InvalidParamsError,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    PushNotificationNotSupportedError,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)
from a2a.utils.errors import A2AError
from a2a.utils.task import (
    apply_history_length,
    decode_list_tasks_cursor,
    decode_page_token,
    validate_history_length,
    validate_page_size,
)
from google.protobuf.timestamp_pb2 import Timestamp

from agent.base.ids import random_hex, random_id
from agent.base.settings import Limits
from agent.edge.extensions import require_extensions
from agent.edge.limits import check_message
from agent.edge.prepared_answer import prepare as prepare_answer
from agent.edge.prepared_answer import taken as answer_taken
from agent.edge.required_fields import check_required_fields
from agent.edge.strings import queryable
from agent.interfaces import ErrorCode, SkillError
from agent.push.configs import PushConfigs
from agent.registry.cards import CardFactory
from agent.registry.loader import Capability, Registry
from agent.routing.decision import Action, Decision
from agent.security.principal import Principal, PrincipalUser, principal_of
from agent.server.bounds import NewRuns, check_history, cursor_of, fit_page
from agent.server.cancel_relay import CancelRelay
from agent.server.conformance import CONFORMANCE_STATE_KEY, ConformanceExecutor
from agent.server.executor import (
    PROJECTION_STATE_KEY,
    ROUTE_STATE_KEY,
    TEXT,
    SkillExecutor,
    projection_of,
    terminal_error,
)
from agent.server.task_run import (
    TERMINAL,
    Listener,
    TaskRun,
    apply_status,
    copy_task,
    enter_run,
    leave_run,
)
from agent.storage.audit import A2A, AGENT_TOOL, AuditLog, AuditRecord
from agent.storage.settlement import Runner, Settlement, StaleTaskError, TaskWriter
from agent.storage.task_store import PARKED_STATES, RUNNING_STATES, ParkedTasks

log = logging.getLogger(__name__)
MAX_ID_LENGTH = 36  # the SDK task store's VARCHAR(36) columns
# C0 and C1 controls, DEL included: PostgreSQL refuses NUL in text outright (a driver error,
# that is a 500), and no identifier of ours holds any of them.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
TASK_NOT_FOUND = "Task not found"
PAGE_TOKEN_TEXT = "pageToken is not a page token this agent issued"
TIMESTAMP_RANGE_TEXT = "is not a time from 0001-01-01 to 9999-12-31 UTC"
MAX_PAGE_TOKEN_CHARS = 512  # the tokens we issue are about 80 characters
# A cursor's time, in ns, as protobuf's Timestamp holds it (0001-01-01 to 9999-12-31 UTC).
_CURSOR_NS = range(-62_135_596_800 * 10**9, 253_402_300_800 * 10**9)
# A cancel for a task another replica runs: how long to wait for that replica to cancel it.
RELAY_WAIT_SECONDS = 5.0
RELAY_POLL_SECONDS = 0.1
_UNPARKED = frozenset({Action.RUN, Action.REFUSE})
"""Routes whose run ends terminal, never waiting for input."""
# A subscription that no change would wake (replicas whose relay lost its connection) follows
# the store at this pace.
REMOTE_POLL_SECONDS = 0.2
# A subscription woken by its task's changes (its own process's, or heard by the relay) looks
# anyway this often.
PARKED_POLL_SECONDS = 5.0
SHUTDOWN_SECONDS = 5.0
SHUTDOWN_MESSAGE = "interrupted by a shutdown"


def _internal(exc: Exception) -> InternalError:
    correlation = random_hex()
    log.error("request failed (correlation id %s)", correlation, exc_info=exc)
    return InternalError(message=f"internal error; correlation id {correlation}")


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    """Let protocol errors through; hide everything else behind a correlation id."""
    if inspect.isasyncgenfunction(inspect.unwrap(method)):  # SDK methods are decorated

        @functools.wraps(method)
        async def stream(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
            try:
                async for item in method(*args, **kwargs):
                    yield item
            except A2AError:
                raise
            except Exception as exc:
                raise _internal(exc) from None

        return stream

    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except A2AError:
            raise
        except Exception as exc:
            raise _internal(exc) from None

    return call


def _storable(identifier: str) -> bool:
    """Whether the task store can hold (or look up) this id: its length, no control characters."""
    return (
        len(identifier) <= MAX_ID_LENGTH
        and not _CONTROL.search(identifier)
        and queryable(identifier)
    )


def _check_task_id(task_id: str) -> None:
    """A lookup by an id no task of ours can have is TaskNotFound (A2A 3.4.2), before the store."""
    if not _storable(task_id):
        raise TaskNotFoundError(message=TASK_NOT_FOUND)  # the id is not echoed


def _check_context_id(context_id: str, field: str) -> None:
    """A context id the store cannot hold is the caller's mistake: InvalidParams, named by field."""
    if len(context_id) > MAX_ID_LENGTH:
        raise InvalidParamsError(message=f"{field} is longer than {MAX_ID_LENGTH}")
    if _CONTROL.search(context_id) or not queryable(context_id):
        raise InvalidParamsError(message=f"{field} holds a control character")


def _check_page_token(token: str) -> None:
    """A page token must decode to a position whose task id the store could hold.

    The SDK's store decodes the token and binds its id part in a query (a NUL there is a
    driver error on PostgreSQL); its refusals quote the whole token back. Any token that is
    not one of ours is refused here, in fixed text, before the store sees it.
    """
    if len(token) > MAX_PAGE_TOKEN_CHARS or not queryable(token):
        raise InvalidParamsError(message=PAGE_TOKEN_TEXT)
    cursor = decode_list_tasks_cursor(token)
    if cursor is not None:
        task_id = cursor.task_id
        if cursor.timestamp_ns is not None and cursor.timestamp_ns not in _CURSOR_NS:
            raise InvalidParamsError(message=PAGE_TOKEN_TEXT)  # the store's ValueError
    else:  # the SDK's older token: the base64 of the id of the page's first task
        try:
            task_id = decode_page_token(token)
        except InvalidParamsError:
            raise InvalidParamsError(message=PAGE_TOKEN_TEXT) from None
    if not task_id or not _storable(task_id):
        raise InvalidParamsError(message=PAGE_TOKEN_TEXT)


def _check_timestamp(stamp: Timestamp, field: str) -> None:
    """A Timestamp protobuf can hold but no time is (seconds outside 0001-01-01..9999-12-31
    UTC, nanos outside 0..999,999,999): binary protobuf carries any int64 and int32, and the
    store's ``ToDatetime`` would raise ValueError, an internal error. Refused in fixed text,
    on every binding (JSON forms of such a time already fail to parse)."""
    try:
        stamp.ToJsonString()  # protobuf's own validity check of seconds and nanos
    except ValueError:
        raise InvalidParamsError(message=f"{field} {TIMESTAMP_RANGE_TEXT}") from None


def _check_ids(params: SendMessageRequest) -> None:
    """Identifiers the task store cannot hold: no such task, or a context we cannot keep."""
    _check_task_id(params.message.task_id)
    _check_context_id(params.message.context_id, "message.context_id")


def _check_output_modes(params: SendMessageRequest, capability: Capability) -> None:
    """Honour acceptedOutputModes: refuse up front when we can produce none of them."""
    accepted = {m.lower() for m in params.configuration.accepted_output_modes}
    if not accepted:
        return
    producible = set(capability.manifest.output_modes) | {TEXT}
    wildcards = {m.split("/")[0] + "/*" for m in producible} | {"*/*"}
    if accepted & (producible | wildcards):
        return
    raise ContentTypeNotSupportedError(
        message=f"{capability.id} produces {', '.join(sorted(producible))}; "
        f"none is in acceptedOutputModes"
    )


def _may_park(context: ServerCallContext) -> bool:
    """Whether a new task's run may end waiting for input: the router asked which skill or
    which arguments, or the route is not the router's (a conformance scenario). A run the
    router sent to a skill, or refused, ends terminal (agent/server/executor.py)."""
    decision = context.state.get(ROUTE_STATE_KEY)
    return not (isinstance(decision, Decision) and decision.action in _UNPARKED)


def _owner(context: ServerCallContext) -> str:
    """The task-store owner of a call (the SDK's default owner resolver's rule)."""
    return context.user.user_name if context.user.is_authenticated else ""


def _push_config(params: SendMessageRequest) -> TaskPushNotificationConfig | None:
    """The push config a send carries in its configuration, if any."""
    configuration = params.configuration
    if configuration.HasField("task_push_notification_config"):
        return configuration.task_push_notification_config
    return None


class LiveTasks:
    """The runs in flight in this process, by task id, and the locks follow-ups take."""

    def __init__(self) -> None:
        self._runs: dict[str, TaskRun] = {}
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self._watchers: dict[str, set[asyncio.Event]] = {}

    def get(self, task_id: str, owner: str) -> TaskRun | None:
        """The owner's run of that task, if it runs here."""
        run = self._runs.get(task_id)
        return run if run is not None and run.owner == owner else None

    def running(self, task_id: str) -> bool:
        """Whether anyone's run of that task is here."""
        return task_id in self._runs

    def add(self, task_id: str, run: TaskRun) -> None:
        """From its creation until it is settled and published."""
        self._runs[task_id] = run
        self.touch(task_id)

    def watch(self, task_id: str) -> asyncio.Event:
        """An event set whenever that task may have changed here (a run starts, a parked
        task is cancelled); the watcher clears it before it looks."""
        changed = asyncio.Event()
        self._watchers.setdefault(task_id, set()).add(changed)
        return changed

    def unwatch(self, task_id: str, changed: asyncio.Event) -> None:
        """A watcher that went away."""
        watchers = self._watchers.get(task_id)
        if watchers is not None:
            watchers.discard(changed)
            if not watchers:
                del self._watchers[task_id]

    def touch(self, task_id: str) -> None:
        """Wake the task's watchers."""
        for changed in self._watchers.get(task_id, ()):
            changed.set()

    def remove(self, task_id: str, run: TaskRun) -> None:
        """Once it is settled and published."""
        if self._runs.get(task_id) is run:
            del self._runs[task_id]

    def all(self) -> list[TaskRun]:
        """Every run in flight (shutdown)."""
        return list(self._runs.values())

    async def acquire(self, task_id: str) -> Callable[[], None]:
        """One request at a time per existing task (follow-ups, cancels of parked tasks);
        returns the release, to be called exactly once."""
        lock, users = self._locks.get(task_id, (asyncio.Lock(), 0))
        self._locks[task_id] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._unuse(task_id)
            raise

        def release() -> None:
            lock.release()
            self._unuse(task_id)

        return release

    def _unuse(self, task_id: str) -> None:
        lock, users = self._locks[task_id]
        if users <= 1:
            del self._locks[task_id]
        else:
            self._locks[task_id] = (lock, users - 1)


def _status_event(task: Task, state: Any, message: Message | None = None) -> TaskStatusUpdateEvent:
    """A status update of ``task`` now (``state``: a TaskState value)."""
    status = TaskStatus(state=state)
    if message is not None:
        status.message.CopyFrom(message)
    status.timestamp.FromDatetime(datetime.now(UTC))
    return TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=status)


class GovernedRequestHandler(RequestHandler):
    """See the module docstring."""

    def __init__(
        self,
        *,
        cards: CardFactory,
        agent_executor: SkillExecutor,
        task_store: TaskStore,
        writer: TaskWriter,
        limits: Limits | None = None,
        conformance: Registry | None = None,
        relay: CancelRelay | None = None,
        replica: str = "",
        parked: ParkedTasks | None = None,
        push: PushConfigs | None = None,
    ) -> None:
        """``task_store`` is read (get, list); every write goes through ``writer``.

        ``conformance``: the internal conformance skills (``--conformance``), else None.
        ``relay``: how a cancel reaches the replica running the task, when there are several.
        ``replica``: this process's id, recorded as the runner of tasks whose ids escape.
        ``parked``: the count of a caller's tasks waiting for input (``max_parked_tasks``);
        None (stores without a task table) leaves that bound unchecked.
        ``push``: the callers' push configs; None: push notifications are not supported.
        """
        self._conformance = (
            ConformanceExecutor(conformance, agent_executor) if conformance is not None else None
        )
        self._executor: AgentExecutor = self._conformance or agent_executor
        self._skills = agent_executor
        self._store = task_store
        self._writer = writer
        self._limits = limits or Limits()
        self._relay = relay
        self._replica = replica
        self._parked = parked
        self._push = push
        self._new_runs = NewRuns()
        self._cards = cards
        self._card: AgentCard = cards.public_card
        self._declared = list(cards.public_card.capabilities.extensions)
        self._live = LiveTasks()
        self._closing = False

    # -- sends -----------------------------------------------------------------------------

    async def _precheck(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | None:
        """Everything refused with a protocol error before a task exists; the stored task a
        follow-up names, or None."""
        check_required_fields(params)
        validate_history_length(params.configuration)
        check_message(params, self._limits)  # first: nothing oversize is routed or stored
        require_extensions(self._declared, context.requested_extensions)
        _check_ids(params)
        config = _push_config(params)
        if config is not None:
            await self._push_for(context).check(config)
        message = params.message
        stored = None
        if message.task_id:
            # Owner-scoped: another caller's task is answered exactly like a missing one, and
            # in fixed text (the SDK's own answers quote the ids back).
            stored = await self._task(message.task_id, context)
            if stored is None:
                raise TaskNotFoundError(message=TASK_NOT_FOUND)
            if not message.context_id:
                # A follow-up that names only its task keeps the task's context.
                message.context_id = stored.context_id
            elif message.context_id != stored.context_id:
                raise InvalidParamsError(
                    message="message.context_id is not the context of the task it names"
                )
            _check_open(stored)
            check_history(stored, message, self._limits)
        if self._conformance is not None:
            claimed = self._conformance.claim(message)
            if claimed is not None:  # a test kit's scenario message: the router never sees it
                context.state[CONFORMANCE_STATE_KEY] = claimed
                return stored
        decision = await self._skills.decide(params.message, principal_of(context.user))
        if decision.action is Action.RUN and decision.capability is not None:
            _check_output_modes(params, decision.capability)
        context.state[ROUTE_STATE_KEY] = decision
        return stored

    async def _task(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The owner's task: the run in flight here, else the store's."""
        run = self._live.get(task_id, _owner(context))
        if run is not None and run.task is not None:
            return copy_task(run.task)
        return await self._store.get(task_id, context)

    async def _start(
        self,
        params: SendMessageRequest,
        context: ServerCallContext,
        stored: Task | None,
        *,
        escapes: bool,
    ) -> TaskRun:
        """A run for this send, registered and started; ``escapes``: its id reaches the
        caller before it settles (its accepted state is durable first).

        A follow-up's run holds its task's lock until it is settled: follow-ups to one task
        run one at a time, and each finds the task as the one before left it.
        """
        config = _push_config(params)
        if config is not None:  # durable before the task's first write, under its id
            if stored is None:
                params.message.task_id = random_id()
            await self._push_for(context).create(params.message.task_id, config, context)
        release = None
        if stored is not None:
            release = await self._live.acquire(stored.id)
            try:
                stored = await self._claim(params, context, stored.id)
            except BaseException:
                release()
                raise
        # A new task that may park is counted under max_parked_tasks; one that cannot, not.
        parked = self._parked if stored is None and _may_park(context) else None
        try:
            if parked is not None:  # (then no await until it runs)
                await self._new_runs.admit(_owner(context), parked.count, self._limits)
            run = self._launch(params, context, stored, escapes, release, parks=parked is not None)
        except BaseException as error:
            if release is not None:
                release()
            if config is not None and stored is None and isinstance(error, A2AError):
                # refused before the task existed: its config goes too
                push = self._push_for(context)
                await push.delete(params.message.task_id, config.id, context)
            raise
        return run

    async def _claim(
        self, params: SendMessageRequest, context: ServerCallContext, task_id: str
    ) -> Task:
        """A follow-up under its task's lock: take the parked task to WORKING, with the new
        message, in one conditional write (a transition, agent/storage/settlement.py).

        Of follow-ups racing on several replicas exactly one wins; each other one waits, as
        it would for this process's lock, until the task is no longer running, and then
        finds it ended (refused, as here) or parked again (and claims it). The task a cancel
        on any replica reads is then WORKING with this replica as its runner, so the cancel
        reaches this run (the relay) instead of ending the task under it.
        """
        while True:
            stored = await self._reread(task_id, context)
            if stored.status.state in RUNNING_STATES:
                await self._settled(task_id, context)
                continue
            if stored.status.state not in PARKED_STATES:  # no state a follow-up may take up
                raise UnsupportedOperationError(message="the task has ended; start a new one")
            check_history(stored, params.message, self._limits)  # (as it is now)
            claimed = _claimed(stored, params.message)
            claim = Settlement(
                _owner(context),
                copy_task(claimed),
                runner=self._runner(context),
                expect=PARKED_STATES,
            )
            try:
                await self._writer.commit(claim)
            except StaleTaskError:
                continue  # another request moved it first: look again
            self._live.touch(task_id)
            return claimed

    async def _settled(self, task_id: str, context: ServerCallContext) -> None:
        """Until the task runs no more: its run here ends, or the store says it settled."""
        run = self._live.get(task_id, _owner(context))
        if run is not None:
            await asyncio.shield(run.done.wait())
            return
        changed = self._live.watch(task_id)
        try:
            while True:
                changed.clear()  # before looking: a change from now on wakes us
                stored = await self._store.get(task_id, context)
                if stored is None or stored.status.state not in RUNNING_STATES:
                    return
                wait = PARKED_POLL_SECONDS if self._quiet() else REMOTE_POLL_SECONDS
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await changed.wait()
        finally:
            self._live.unwatch(task_id, changed)

    def _runner(self, context: ServerCallContext) -> Runner:
        """This replica as the runner of the caller's task (its ``task_runner`` row)."""
        principal = principal_of(context.user)
        decision = context.state.get(ROUTE_STATE_KEY)
        capability = decision.capability if isinstance(decision, Decision) else None
        return Runner(
            self._replica,
            principal.subject or "anonymous",
            principal.tenant,
            capability.id if capability is not None else None,
        )

    def _launch(
        self,
        params: SendMessageRequest,
        context: ServerCallContext,
        stored: Task | None,
        escapes: bool,
        release: Callable[[], None] | None,
        *,
        parks: bool,
    ) -> TaskRun:
        """``parks``: a new task admitted under ``max_parked_tasks``, counted while it runs; a
        new task not admitted (its bound checked, it could not park) is failed if it tries."""
        message = params.message
        runner = self._runner(context) if escapes or stored is not None else None
        if stored is None:
            message.task_id = message.task_id or random_id()  # (set for a push config)
            if not message.context_id:
                message.context_id = random_id()
            may_park = parks or self._parked is None
            run = TaskRun(_owner(context), self._writer, runner=runner, may_park=may_park)
        else:  # claimed: durable and visible as WORKING (its bindings are written at once)
            run = TaskRun(_owner(context), self._writer, task=stored, runner=runner)
        request = RequestContext(
            context,
            request=params,
            task_id=message.task_id,
            context_id=message.context_id,
            task=stored,
        )
        self._live.add(message.task_id, run)
        run.runner = asyncio.get_running_loop().create_task(
            self._drive(run, request, message.task_id, release)
        )
        run.runner.add_done_callback(_retrieved)
        if parks:
            self._new_runs.track(run.owner, run.runner)
        return run

    async def _drive(
        self,
        run: TaskRun,
        request: RequestContext,
        task_id: str,
        release: Callable[[], None] | None,
    ) -> None:
        """Run the executor to a settled state, commit it, publish it, forget the run."""
        token = enter_run(run)
        try:
            with AuditLog.batched(
                task_id, on_flush=run.flush_audit, projection=projection_of(request)
            ):
                run.executing = True
                try:
                    await self._execute(run, request)
                finally:
                    run.executing = False
                audit = AuditLog.take()
            settlement = run.settlement(audit)
            if settlement is not None:
                try:
                    await self._writer.commit(settlement)
                except StaleTaskError:
                    await self._ended_meanwhile(run, settlement, request.call_context)
        except BaseException:
            run.finish()  # listeners are told; the store keeps its last durable state
            raise
        finally:
            leave_run(token)
            self._live.remove(task_id, run)
            if release is not None:
                release()
        run.finish()

    async def _ended_meanwhile(
        self, run: TaskRun, settlement: Settlement, context: ServerCallContext | None
    ) -> None:
        """The run's settled state was refused: the stored task ended meanwhile (a survivor
        ended it as its runner's lease lapsed, or a cancel ended it when this replica did not
        answer in time). The stored end stands and is what the run's callers get; the
        invocation's audit rows are still written (what it did, it did)."""
        assert run.task is not None and context is not None
        log.warning("task %s ended elsewhere while it ran here; its end stands", run.task.id)
        if settlement.audit:
            await self._writer.commit(Settlement(run.owner, audit=settlement.audit))
        stored = await self._store.get(run.task.id, context)
        if stored is None:
            raise TaskNotFoundError(message=TASK_NOT_FOUND)
        run.ended_elsewhere(stored)

    async def _execute(self, run: TaskRun, request: RequestContext) -> None:
        """The executor, to a settled state whatever happens (a cancel ends it CANCELED)."""
        try:
            await self._executor.execute(request, run)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            if run.task is None or run.final is not None:
                return
            if self._closing:
                error = SkillError(ErrorCode.EXECUTION_FAILED, SHUTDOWN_MESSAGE)
                await run.enqueue_event(
                    _status_event(
                        run.task, TaskState.TASK_STATE_FAILED, _error_message(run.task, error)
                    )
                )
                return
            await self._executor.cancel(request, run)
        except Exception as exc:  # the executor ends every error itself; this is a defect
            if run.task is not None and run.final is None:
                error = terminal_error(exc, run.task.id)
                await run.enqueue_event(
                    _status_event(
                        run.task, TaskState.TASK_STATE_FAILED, _error_message(run.task, error)
                    )
                )
            else:
                raise

    @_guarded
    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        """Blocking: answered with the settled task; returnImmediately: with the accepted one."""
        stored = await self._precheck(params, context)
        immediately = params.configuration.return_immediately
        run = await self._start(params, context, stored, escapes=immediately)
        await self._await(run, immediately)
        if run.reply is not None:
            return run.reply
        # (printed from the prepared answer, the task's artifacts need not be whole)
        task = run.sparse_task() if answer_taken() else run.task
        if task is None:
            raise InternalError(message="the invocation ended without a task")
        # A settled run's task changes no more (its run is over and forgotten): no copy.
        task = task if run.done.is_set() else copy_task(task)
        answer = apply_history_length(task, params.configuration)
        prepare_answer(answer, run.wire_artifacts)
        return answer

    async def _reread(self, task_id: str, context: ServerCallContext) -> Task:
        """A follow-up under its task's lock: the task as it is now, still open."""
        stored = await self._task(task_id, context)
        if stored is None:
            raise TaskNotFoundError(message=TASK_NOT_FOUND)
        _check_open(stored)
        return stored

    async def _await(self, run: TaskRun, immediately: bool) -> None:
        """Until the run settled (or, returnImmediately, was accepted); a dropped request does
        not stop the run."""
        assert run.runner is not None
        if immediately:
            accepted = asyncio.ensure_future(run.accepted.wait())
            await asyncio.wait({accepted, run.runner}, return_when=asyncio.FIRST_COMPLETED)
            if not accepted.done():
                accepted.cancel()
            if run.runner.done() and run.task is None:
                run.runner.result()  # its error, if it failed before a task existed
            return
        await asyncio.shield(run.runner)

    @_guarded
    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        """The task first (durable by then), then its events, the settled state last."""
        if not self._card.capabilities.streaming:
            raise UnsupportedOperationError(message="streaming is not supported")
        stored = await self._precheck(params, context)
        run = await self._start(params, context, stored, escapes=True)
        # A new task's first event is the Task (published once durable); a follow-up's task
        # exists already, so it goes first, as it is now (the SDK starts with a status).
        first = copy_task(run.task) if stored is not None and run.task is not None else None
        listener = run.listen()
        assert run.runner is not None
        try:
            if first is not None:
                yield apply_history_length(first, params.configuration)
            while True:
                event = await listener.get()
                if event is None:
                    break
                if isinstance(event, Task):
                    event = apply_history_length(event, params.configuration)
                yield event
            if run.runner.done() and not run.runner.cancelled():
                run.runner.result()  # a failed settled write is the caller's error too
        finally:
            run.forget(listener)

    # -- reads -----------------------------------------------------------------------------

    @_guarded
    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        """The run in flight here, else the store; an id the store cannot hold names none."""
        check_required_fields(params)
        validate_history_length(params)
        _check_task_id(params.id)
        task = await self._task(params.id, context)
        if task is None:
            raise TaskNotFoundError(message=TASK_NOT_FOUND)
        return apply_history_length(task, params)

    @_guarded
    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        """The store's page, with the newest state of tasks running here."""
        validate_history_length(params)
        if params.HasField("page_size"):
            validate_page_size(params.page_size)
        if params.status not in TaskState.values():
            raise InvalidParamsError(message="status is not a task state")
        if _CONTROL.search(params.context_id) or not queryable(params.context_id):
            raise InvalidParamsError(message="context_id holds a control character")
        if params.page_token:
            _check_page_token(params.page_token)
        if params.HasField("status_timestamp_after"):
            _check_timestamp(params.status_timestamp_after, "status_timestamp_after")
        try:
            page = await self._store.list(params, context)
        except InvalidParamsError:  # the store's refusals of a token quote it back
            if not params.page_token:
                raise
            raise InvalidParamsError(message=PAGE_TOKEN_TEXT) from None
        owner = _owner(context)
        cursors = [cursor_of(task) for task in page.tasks]  # where the store listed them
        for task in page.tasks:
            run = self._live.get(task.id, owner)
            if run is not None and run.task is not None:
                task.CopyFrom(run.task)
            if not params.include_artifacts:
                task.ClearField("artifacts")
            limited = apply_history_length(task, params)
            if limited is not task:
                task.CopyFrom(limited)
        fit_page(page, cursors, self._limits.max_list_bytes)
        return page

    # -- cancel ----------------------------------------------------------------------------

    @_guarded
    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        """Cancel the run here, relay to the replica that runs it, or end a parked task.

        Ending a stored task is a transition (agent/storage/settlement.py): if the task moved
        meanwhile (a follow-up on another replica took it up, or its run settled), the cancel
        looks again and acts on what the task is now, never writing over it.
        """
        check_required_fields(params)
        _check_task_id(params.id)
        while True:
            cancelled = await self._cancel_once(params, context)
            if cancelled is not None:
                return cancelled

    async def _cancel_once(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        """One look at the task and the cancel it calls for; None: it moved, look again.

        The caller's own task first: asking the executor about an id the caller cannot see
        would tell it that someone's task runs under that id.
        """
        owner = _owner(context)
        run = self._live.get(params.id, owner)
        if run is not None and run.task is not None:
            if self._skills.refuses_cancel(params.id):
                raise TaskNotCancelableError(message="this skill's invocations cannot be cancelled")
            return await self._cancel_run(run)
        stored = await self._store.get(params.id, context)
        if stored is None:
            raise TaskNotFoundError(message=TASK_NOT_FOUND)
        if stored.status.state in TERMINAL:
            raise TaskNotCancelableError(message="the task has ended")
        if await self._skills.refuses_cancel_anywhere(stored, principal_of(context.user)):
            raise TaskNotCancelableError(message="this skill's invocations cannot be cancelled")
        if (
            self._relay is not None
            and stored.status.state in RUNNING_STATES
            and not self._live.running(params.id)
        ):
            return await self._cancel_where_it_runs(params, context)
        release = await self._live.acquire(params.id)
        try:
            run = self._live.get(params.id, owner)
            if run is None or run.task is None:
                return await self._cancel_stored(params.id, context)
        finally:
            release()
        return await self._cancel_run(run)  # a follow-up took the task up meanwhile

    async def _cancel_run(self, run: TaskRun) -> Task:
        """Cancel the executor, wait for the CANCELED state to be durable, return it."""
        assert run.task is not None and run.runner is not None
        if run.final is not None and run.final.status.state in TERMINAL:
            raise TaskNotCancelableError(message="the task has ended")
        if run.executing:  # only the executor is cancelled, never the settled write
            run.runner.cancel()
        await asyncio.shield(run.done.wait())
        if run.task.status.state != TaskState.TASK_STATE_CANCELED:
            raise TaskNotCancelableError(message="the task ended before it was cancelled")
        return copy_task(run.task)

    async def _cancel_stored(self, task_id: str, context: ServerCallContext) -> Task | None:
        """A task no process runs (parked for input, or left by a process that died): CANCELED,
        with the cancel's audit row, if it is still as read; None if it moved meanwhile."""
        stored = await self._store.get(task_id, context)
        if stored is None:
            raise TaskNotFoundError(message=TASK_NOT_FOUND)
        if stored.status.state in TERMINAL:
            raise TaskNotCancelableError(message="the task has ended")
        parked = stored.status.state in PARKED_STATES
        apply_status(stored, _status_event(stored, TaskState.TASK_STATE_CANCELED))
        cancel = Settlement(
            _owner(context),
            copy_task(stored),
            audit=[await self._cancel_record(task_id, context)],
            expect=PARKED_STATES if parked else RUNNING_STATES,
        )
        try:
            await self._writer.commit(cancel)
        except StaleTaskError:
            return None
        self._live.touch(task_id)  # subscribers waiting on the parked task
        return stored

    async def _cancel_record(self, task_id: str, context: ServerCallContext) -> AuditRecord:
        """The audit row of a cancel that ends a stored task: who, which task (and skill,
        when its binding names one), ``agent`` ``cancel`` ``allow`` ``canceled``."""
        principal = principal_of(context.user)
        projection = context.state.get(PROJECTION_STATE_KEY, A2A)
        return AuditRecord(
            principal=principal.subject or "anonymous",
            tenant=principal.tenant,
            tool=AGENT_TOOL,
            operation="cancel",
            decision="allow",
            reason="canceled",
            skill_id=await self._skills.bound_skill(task_id, principal),
            task_id=task_id,
            projection=projection if isinstance(projection, str) else A2A,
        )

    async def _cancel_where_it_runs(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        """The task runs on another replica, or on none any more (its runner died).

        Writing CANCELED here would be overwritten by the runner's result, so the runner is
        asked to cancel it; the caller gets what the store then says. If no replica acts in
        time, none runs the task, and the store's CANCELED is the last word: written only over
        a task still running, and never written over by a late result (its settlement is
        refused). None: the task moved meanwhile.
        """
        assert self._relay is not None
        await self._relay.request(params.id, principal_of(context.user))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RELAY_WAIT_SECONDS
        while loop.time() < deadline:
            await asyncio.sleep(RELAY_POLL_SECONDS)
            stored = await self._store.get(params.id, context)
            if stored is not None and stored.status.state not in RUNNING_STATES:
                if stored.status.state == TaskState.TASK_STATE_CANCELED:
                    return stored
                raise TaskNotCancelableError(message="the task ended before it was cancelled")
        log.warning("no replica runs task %s any more; cancelling it in the store", params.id)
        release = await self._live.acquire(params.id)
        try:  # only while it still runs: a late end from its runner is then refused
            return await self._cancel_stored(params.id, context)
        finally:
            release()

    def task_changed(self, task_id: str) -> None:
        """The task changed outside this process's runs (a replica wrote its row and the relay
        heard it, or the parked-task sweeper ended it): wake who waits on it here."""
        self._live.touch(task_id)

    def _quiet(self) -> bool:
        """Whether every stored change of a task wakes its watchers here (a single process
        makes them all itself; replicas hear each other's while the relay listens)."""
        return self._relay is None or self._relay.listening

    async def cancel_if_running_here(self, task_id: str, principal: Principal) -> None:
        """A cancel relayed by a peer: act on it only for a task this replica runs."""
        run = self._live.get(task_id, PrincipalUser(principal).user_name)
        if run is None or run.task is None:
            return
        if self._skills.refuses_cancel(task_id):
            return
        try:
            await self._cancel_run(run)
        except A2AError as error:  # the asking replica reports the outcome from the store
            log.info("a relayed cancel was refused here: %s", type(error).__name__)

    # -- subscribe -------------------------------------------------------------------------

    @_guarded
    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        """The task now, then its events until it is terminal (A2A 3.1.6).

        Across runs, as the SDK's subscription does: a task parked for input (or a run that
        parks it) is not the end; the stream follows the run of each follow-up here, or the
        store when another replica runs it, until the task ends.
        """
        if not self._card.capabilities.streaming:
            raise UnsupportedOperationError(message="streaming is not supported")
        check_required_fields(params)
        _check_task_id(params.id)
        run = self._live.get(params.id, _owner(context))
        if run is not None and run.task is not None:
            snapshot = copy_task(run.task)  # and attach, with no await in between
            listener: Listener | None = run.listen()
        else:
            stored = await self._store.get(params.id, context)
            if stored is None:
                raise TaskNotFoundError(message=TASK_NOT_FOUND)
            if stored.status.state in TERMINAL:
                raise UnsupportedOperationError(message="the task has ended")
            snapshot, run, listener = stored, None, None
        async for event in self._follow(snapshot, run, listener, context):
            yield event

    async def _follow(
        self,
        snapshot: Task,
        run: TaskRun | None,
        listener: Listener | None,
        context: ServerCallContext,
    ) -> AsyncGenerator[Event, None]:
        """The snapshot, then the task's events until it is terminal: each run's here as it
        happens (``listener``: attached to ``run`` when the snapshot was taken), else the
        store's settled states (only those reach it; the artifacts come with them)."""
        task_id, owner = snapshot.id, _owner(context)
        seen = snapshot
        changed = self._live.watch(task_id)
        try:
            yield snapshot
            while True:
                if run is not None and listener is not None:
                    while (event := await listener.get()) is not None:
                        yield event
                    run.forget(listener)
                    if run.final is None or run.task is None:
                        return  # it failed before a settled state (or answered a Message)
                    seen, run, listener = copy_task(run.task), None, None
                if seen.status.state in TERMINAL:
                    return
                changed.clear()  # before looking: a change from now on wakes us
                run = self._live.get(task_id, owner)
                if run is not None and run.task is not None:
                    listener = run.listen()  # a follow-up runs it here now
                    continue
                current = await self._store.get(task_id, context)
                if current is None:
                    return
                if _moved(seen, current):
                    known = {a.artifact_id for a in seen.artifacts}
                    for artifact in current.artifacts:
                        if artifact.artifact_id not in known:
                            yield TaskArtifactUpdateEvent(
                                task_id=task_id, context_id=current.context_id, artifact=artifact
                            )
                    yield TaskStatusUpdateEvent(
                        task_id=task_id, context_id=current.context_id, status=current.status
                    )
                    seen = current
                    continue
                # Every change of the task wakes us (this process's own; a replica's, heard
                # by the relay): then a look now and then is a safety net only. A task
                # running in no process here, with no relay, is followed in the store.
                woken = self._quiet() and (
                    self._relay is not None or seen.status.state not in RUNNING_STATES
                )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(
                        PARKED_POLL_SECONDS if woken else REMOTE_POLL_SECONDS
                    ):
                        await changed.wait()
        finally:
            if run is not None and listener is not None:
                run.forget(listener)
            self._live.unwatch(task_id, changed)

    # -- cards and push --------------------------------------------------------------------

    @_guarded
    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        """The caller's own projection; the edge has already refused anonymous callers."""
        principal = principal_of(context.user)
        if not principal.authenticated:
            raise InvalidParamsError(message="the extended card needs an authenticated caller")
        return self._cards.extended_card(principal)

    def _push_for(self, context: ServerCallContext) -> PushConfigs:
        """The push configs, for an authenticated caller (an anonymous one's tasks and
        configs would be every anonymous caller's)."""
        if self._push is None:
            raise PushNotificationNotSupportedError(message="push notifications are not supported")
        if not principal_of(context.user).authenticated:
            raise InvalidParamsError(message="push notifications need an authenticated caller")
        return self._push

    async def _push_task(self, task_id: str, context: ServerCallContext) -> PushConfigs:
        """The push configs, once the task is the caller's (else: no such task)."""
        push = self._push_for(context)
        _check_task_id(task_id)
        if await self._task(task_id, context) is None:
            raise TaskNotFoundError(message=TASK_NOT_FOUND)
        return push

    @_guarded
    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Store (or replace, by id) a push config of the caller's task (A2A 3.1.7)."""
        check_required_fields(params)
        push = await self._push_task(params.task_id, context)
        return await push.create(params.task_id, params, context)

    @_guarded
    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """One of the caller's push configs of the caller's task."""
        check_required_fields(params)
        push = await self._push_task(params.task_id, context)
        return await push.get(params.task_id, params.id, context)

    @_guarded
    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        """The caller's push configs of the caller's task (one page: they are few)."""
        check_required_fields(params)
        push = await self._push_task(params.task_id, context)
        return ListTaskPushNotificationConfigsResponse(
            configs=await push.list(params.task_id, context)
        )

    @_guarded
    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        """Delete one of the caller's push configs (a missing one is already deleted)."""
        check_required_fields(params)
        push = await self._push_task(params.task_id, context)
        await push.delete(params.task_id, params.id, context)

    # -- lifecycle -------------------------------------------------------------------------

    async def hold_task(self, task_id: str) -> Callable[[], None]:
        """The lock a follow-up of that task takes here (for the parked-task sweeper)."""
        return await self._live.acquire(task_id)

    async def aclose(self) -> None:
        """At shutdown: give runs a moment, then end the rest FAILED (interrupted)."""
        runs = [run.runner for run in self._live.all() if run.runner is not None]
        if not runs:
            return
        _, pending = await asyncio.wait(runs, timeout=SHUTDOWN_SECONDS)
        self._closing = True
        for run in self._live.all():
            if run.runner in pending and run.executing:
                run.runner.cancel()
        if pending:
            await asyncio.wait(pending, timeout=SHUTDOWN_SECONDS)


def _retrieved(runner: asyncio.Task[None]) -> None:
    """A run's failure reaches its caller (or, with none left, the log), never asyncio's
    "exception was never retrieved"."""
    if not runner.cancelled() and runner.exception() is not None:
        log.debug("a run ended with an error its caller was given", exc_info=runner.exception())


def _moved(seen: Task, current: Task) -> bool:
    """Whether the stored task has a new status (a follow-up's new message alone is not one)."""
    return (
        current.status.state != seen.status.state
        or current.status.timestamp != seen.status.timestamp
    )


def _claimed(stored: Task, message: Message) -> Task:
    """The parked task a follow-up takes up: the SDK's rule for its history (the status
    message, then the new message, join it), and WORKING from now."""
    task = copy_task(stored)
    if task.status.HasField("message"):
        task.history.append(task.status.message)
    task.history.append(message)
    task.status.Clear()
    task.status.state = TaskState.TASK_STATE_WORKING
    task.status.timestamp.FromDatetime(datetime.now(UTC))
    return task


def _check_open(task: Task) -> None:
    """A send to a task that has ended is refused (A2A 3.1.1), before any event."""
    if task.status.state in TERMINAL:
        raise UnsupportedOperationError(message="the task has ended; start a new one")


def _error_message(task: Task, error: SkillError) -> Message:
    """The status message of a task ended here: exactly one Data Part, the error object."""
    return Message(
        message_id=random_hex(),
        role=Role.ROLE_AGENT,
        task_id=task.id,
        context_id=task.context_id,
        parts=[new_data_part(error.to_object(), media_type="application/json")],
    )
