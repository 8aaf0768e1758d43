"""The referee: runs untrusted Gin Rummy engines, enforces the rules and keeps the score."""
