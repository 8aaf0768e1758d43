"""What a person sees: the HTML report and replay viewer (``html``), ``ginref replay`` and
``ginref play`` (``replay``, ``play``), the live page of a run (``live``, ``live_server``,
``live_page``), the progress bar (``progress``) and the protocol transcript of the spec
(``transcript``).
"""
