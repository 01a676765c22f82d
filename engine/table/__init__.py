"""The table referee (`unoattack table`, and the web page's through engine/web/table_service.py).

- `commands`: what the table can be told (one typed command table: words, help, parsing)
- `referee`: the game at the table, refereed on hand counts; moves return outcomes
- `questions`: what a command leaves out, asked (a wild's colour, a WAA's target, ...)
- `session`: commands applied, undo, what is said, the view, the state file kept
- `boxsync`: the box's events as steps, the button kept in step with the game
- `state_file`: the state file (saved after every step, read back checked, version 1 upgraded)
- `options`: `GameOptions`, which game is refereed
- `view`: the table's state in words (prompt, owed, status, scoreboard) and as data
- `console`: the prompt at a terminal
- `cli`: `unoattack table` (argparse, the loop)
"""
