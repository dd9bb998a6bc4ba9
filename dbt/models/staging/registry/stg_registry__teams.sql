-- Registry teams from the latest landed version of each registry file.
{{ latest_registry_version(source('registry', 'registry_teams')) }}
