"""The contract across the helper boundary: the wire format (`wire`), the benchmark spec
(`spec`), typed events and bench.start's reply (`events`), every other verb's arguments and
reply (`verbs`, `tuning`, `tuning_replies`; `messages` maps verbs to them, `fields` holds what
they share), and a client core without I/O (`client`)."""
