"""The registry: manifests, their loading, the one policy, versions and the cards it projects."""
