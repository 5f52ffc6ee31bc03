"""What the worker process and its data-plane process exchange, defined once: task plans, the
channel and its calls and notices, and what a task reports.
"""
