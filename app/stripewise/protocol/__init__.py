"""The contract across the helper boundary: the wire format (`wire`), the benchmark spec
(`spec`), typed events and replies (`events`), and a client core without I/O (`client`)."""
