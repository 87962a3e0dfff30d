"""Kubernetes objects as mpigen builds them, below the stages that build and read them: one object and the chart
values in it (manifest), the standard labels and chart identity (labels), and the files a chart holds
(chartfiles), the one contract between the packager that writes charts and the readers that read them back."""
