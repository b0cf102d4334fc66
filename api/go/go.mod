module hdrf

go 1.19
