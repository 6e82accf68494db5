"""The Models and memory page's sections: residency inputs, placements and their check."""
