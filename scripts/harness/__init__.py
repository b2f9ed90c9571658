"""What the Python scripts under scripts/ share, one module a concern:

  harness.process    run a command: output, exit status, wall time, peak RSS, a time limit;
                     stop or signal a running one
  harness.booksync   booksync's environment, a binary bound to it (`Booksync`),
                     generated record files (make-collection.py)
  harness.emulator   the Firestore emulator's REST API: one kept-alive connection
                     (`Client`): list, get, write in batches, delete, query, reset a project
  harness.scratch    a temporary directory that is removed however the script ends
  harness.checks     a tally of checks, and a pinned package in a virtual environment
  harness.doc_blocks the fenced code blocks of the docs

A script in scripts/ imports them as `from harness import booksync` (its own
folder is on sys.path when it runs); this file imports nothing, so a script
pays only for the modules it uses (the benchmark's reference client is timed
from interpreter start).

Independent checkers keep their own implementation on purpose: Google's client
(app-compat.py), the jsonschema validator (check-json-schema.py), cmark-gfm
(check-markdown.py) and openssl (token_server.py) are never routed through
booksync's code or this package's REST client.
"""
