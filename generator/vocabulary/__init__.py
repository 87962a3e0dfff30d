"""The upstream projects' vocabularies, each defined once and imported by build, validate and check alike,
the way mpi-operator's controller and its validation both import its Go `v2beta1` package."""
