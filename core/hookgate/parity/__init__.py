"""The runtime parity report: which gate each runtime can enforce, and how, computed from the
capability tables and the gates' declared needs, each cell tied to the test that shows it."""
