"""Managed runs (`python -m jobs run`): submit, follow, classify why a job ended, resubmit on an
infrastructure cause with the same run name, and keep a ledger of every attempt.

`causes` says why an attempt ended, `ledger` records attempts, `precheck` reads quota and the cluster's
allocation before a job is created, `loop` ties them to `jobs.submit.lifecycle.submit`.
"""
