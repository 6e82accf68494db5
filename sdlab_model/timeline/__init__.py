"""Timeline: the serving system over time (traffic shapes, autoscalers, canary rollouts)."""
