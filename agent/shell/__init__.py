"""The shell command parser the permission rules read: a command line split into the simple commands
it runs, with what each runs or writes besides its own words. See AGENTS.md."""
