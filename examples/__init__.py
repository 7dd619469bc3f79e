"""Deployments of the core other than the network agent, kept in the repository so that the core
is always exercised by a domain that shares nothing with networks."""
