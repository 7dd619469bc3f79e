"""Push notifications (A2A 1.0): configs (``configs``), the durable outbox (``outbox``), the
delivery worker (``delivery``), safe targets (``targets``), the agent's signed token
(``signing``), their assembly for one process (``service``), and ``netagent listen``'s receiver
(``listener``). docs/push-notifications.md is the reference."""
