"""Pure reducer logic: plain functions over plain data, no Django and no Spark imports."""
