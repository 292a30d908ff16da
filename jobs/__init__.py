"""Post-deploy jobs: build, render, submit and verify Azure ML jobs from the stack's outputs."""
