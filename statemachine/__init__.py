"""Kafka 3.7.1's ZooKeeper-mode controller, re-executed as a pure fold.

Entry point: `statemachine.replay.replay`. No pyspark or pandas import anywhere in here.
"""
