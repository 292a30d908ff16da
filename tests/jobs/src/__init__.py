"""A package, so that pytest's default import mode (prepend) names this folder's test modules
`src.test_<module>`: bare basenames such as test_teardown.py or test_health.py are taken by tests/e2e, and
that mode needs every test module's name to be unique. (tests/jobs/health/ cannot be one: a package named
`health` would shadow jobs/src/health.py, which the tests import by basename.)"""
