"""The contract across the helper boundary: the wire format (`wire`), the one codec every type
reads and writes its wire object through (`codec`), the benchmark spec's shape (`spec`), typed
events (`events`), every verb's arguments and reply (`verbs`, `tuning`, `tuning_replies`;
`messages` maps verbs to them, `fields` holds what they share), a group run's outcome
(`group`), and a client core without I/O (`client`)."""
