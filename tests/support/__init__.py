"""Helpers the tests share: real servers on loopback ports and the scenarios they serve.

`service_server` (a real `mgi serve` child process and an HTTP client), `redis_server` (a real
`redis-server` in a temporary folder), `smtp_server` (a loopback SMTP receiver),
`webhook_receiver` (a loopback webhook receiver), `playground_browser` (the playground in a
real Chromium), `pathological` (scenarios that are costly to compile). Tests import them as
`from support.service_server import ServiceServer`. Nothing here mocks a component.
"""
