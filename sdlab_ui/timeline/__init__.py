"""The Timeline page's sections: traffic over time, autoscalers, and the canary rollout."""
