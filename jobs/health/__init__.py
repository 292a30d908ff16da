"""The cluster health job: its builder (`build`) and the report read from its logs (`report`)."""
