"""What every Spark job shares: the session and reading and writing files and tables."""
