"""Knowledge, Task and User agent definitions shipped as data (YAML)."""
