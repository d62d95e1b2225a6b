"""How the file system is touched safely: paths opened as they were decided, regular files only,
locks shared between processes, a file's other names. See AGENTS.md."""
