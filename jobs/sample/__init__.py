"""`make run`: simulate the bundled sample log and replay it locally."""
