"""Browser-level timing: Playwright driving Chromium against a target's web UI, stamped from the DOM."""
