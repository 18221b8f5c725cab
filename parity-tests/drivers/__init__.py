"""The runtime drivers of the parity tests: one module per runtime, each with

    runtime             its name in the parity matrix
    Payloads            the payload tier: a scenario session as that runtime's hook payloads,
                        answered by hookgate's adapter for it (base.PayloadHost)
    play(session, root) the real tier: the session run on the runtime's pinned binary against
                        the scripted fake model (real.RealPlay)
"""
