"""Gemini CLI's own numbers that hookgate's engine must respect: none. (Gemini CLI has no cap on
AfterAgent retries: `stop_hook_active` only tells a hook that it is already in one; a stop gate's
own bound is what ends a held turn.)"""
