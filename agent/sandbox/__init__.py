"""The command sandbox: every command the model runs is confined by the operating system (bubblewrap
on Linux, Seatbelt on macOS), with its own network namespace and proxy on Linux. See AGENTS.md and
command_sandbox.py."""
