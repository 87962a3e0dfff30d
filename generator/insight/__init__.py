"""`mpigen plan` and `mpigen explain`: what the fleet's pools offer and its jobs ask (capacity), where every job
lands and who waits for whom (plan, picture), and where each value of one job comes from (explain). They read the
resolved model, as the stages do, and write nothing but their report."""
