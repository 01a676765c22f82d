"""What the box and the host share, pure: no GPIO, no state machine, no serial port behind it.

- `errors`: the error tree and exit codes (0, 1, 2 usage, 78 config)
- `commandline`: what both command lines share (subcommands, one-line errors, Ctrl-C, counts)
- `textfile`: how a person's text file is read (at most 64 MB) and decoded
- `atomic`: a file written whole or not at all
- `entry`: where both console scripts start (the stop signals taken before anything loads)
- `jam`: the jam model (how many cards a press fires)
- `boxconfig`: reading a box's `launcher.toml` (checking getters; the parts the host reads)
- `boxtoml`: editing a box's `launcher.toml` in place (comments and layout kept)

Both `firmware/` (the box) and `engine/` (the host) import it; it imports only the standard
library and `i18n`.
"""
