"""The agent session: what ACP and print mode drive. create_session sets one up from the composition
root's options and the settings; run_turn streams a turn's events; subagents are child sessions;
tools may join after it opened. See AGENTS.md."""
