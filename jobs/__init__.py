"""Spark side of the project: read, validate, group, replay, write (DESIGN §2).

No Kafka rule is decided here; every decision is the core's (`statemachine/`).
"""
