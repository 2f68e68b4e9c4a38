"""The competition server (``referee server``): an adapter on top of the competition service.

Entrants register with an invite code, log in, take API tokens and upload bots; one coordinator
process owns the SQLite store and runs the competition through the service, as the CLI does.
Its modules need the ``referee[server]`` extra (Starlette, Jinja2, argon2-cffi...); importing this
package alone needs none of it.

- :mod:`.auth`: the security primitives, pure functions and small classes with no web framework
  and no database: names and their look-alikes, passwords (argon2id), secrets, tokens and invite
  codes, CSRF tokens, the rate limits of logins and uploads.
"""
