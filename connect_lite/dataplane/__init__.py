"""The data-plane process: task loops, batching, error handling and the dead letter queue, and the
process's main. It reaches the worker only through the channel (connect_lite.protocol).
"""
