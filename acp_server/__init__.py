"""The ACP v1 server: JSON-RPC over stdio, translating editor requests into agent turns."""
