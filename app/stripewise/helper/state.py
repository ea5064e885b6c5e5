"""Where the helper keeps its state (what the tuning verbs need of its session is
`helper.tuning.apply.HelperState`)."""

DEFAULT_STATE_DIR = "/var/lib/stripewise"  # the tuning journal, records of created files
