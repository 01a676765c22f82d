"""What the box and the host share: frames and messages (``protocol``), the op table (``ops``),
port checks (``ports``), the host client (``client``), one event-to-text (``text``).

Layering: ``wire`` imports the standard library, pyserial and ``common.errors`` (exit codes,
stdlib only); never ``engine`` and never a GPIO library. ``firmware`` imports ``wire``, never
``engine``; ``engine`` imports ``wire`` and the pure firmware modules.
``tests/test_layers.py`` fails on an import against these rules.
"""
