"""The warm path: stdin hook calls answered by a running core of the project (server.py) through a
client that imports only the standard library (client.py), with the in-process path as fallback.
Kept empty: importing the package must cost the hook path nothing."""
