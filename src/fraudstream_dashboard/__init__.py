"""The chart's Grafana dashboard, built with Grafana's own SDK (grafana-foundation-sdk) so that its JSON follows
Grafana's dashboard schema. Development tooling, like fraudstream_localstack: not a package of the wheel or the image;
`make dashboard` writes charts/fraudstream/files/dashboard.json from it, and a unit test holds the two equal."""
