"""Everything Stripewise knows about fio, without Qt: the job options of each benchmark
phase (`jobs`, `layout`), the reading of its JSON output (`stream` for a running fio's pipe,
`report` for its figures), and the one latency definition every fio figure here follows
(`latency`), used alike by the helper's fio engine, group runs on several hosts and the
importer.

Latency: completion latency (fio's `clat`, from the moment the submission returned to the
completion), in microseconds, per job. The jobs of a phase (its streams) combine by merging
their percentile points weighted by each job's I/O count, never by averaging percentiles;
a phase that reads and writes reports the direction that did more I/Os. docs/history.md
("Latency") says the same for people.

The package sits below the middle layer (helper, hosts, importers, history...) and above
`stripewise.protocol` and `stripewise.model`; it imports none of the packages that use it.
"""
