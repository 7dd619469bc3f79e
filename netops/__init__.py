"""The network agent: wires the core with the inventory tool, topology, seeding, demo."""
