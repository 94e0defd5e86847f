"""The cluster simulator behind `python -m jobs.sim` (`cli.py` is the command).

presets.py  the named sizes (tiny, sample, bench, large) and their event mix
truth.py    the simulator's own view of the cluster: who is alive, who leads, who is in sync
assign.py   Kafka's rack-unaware replica assignment
driver.py   the story teller: picks what happens next and emits it as controller events
writer.py   the Parquet sink: bounded files in seq order, in the input contract's types
"""
