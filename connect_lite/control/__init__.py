"""The worker process: REST's herder, connectors, statuses and their retries, topic tracking,
offsets requests, config providers, metrics, and its side of the channel to the data plane.
"""
