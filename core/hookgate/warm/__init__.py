"""The warm path: stdin hook calls answered by a running core of the project (server.py) through
the hook command's own client (hookgate.client, which imports only the standard library), with
the in-process path as fallback. Kept empty: it is the core's package, not the client's."""
