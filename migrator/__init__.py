"""verl-migrate: move verl users' scripts, configs and docs across verl releases."""

__version__ = "0.1.0"
